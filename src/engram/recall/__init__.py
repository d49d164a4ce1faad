"""Pure retrieval building blocks: embedders, fusion, scoring, relevance, re-ranking.

What the stores and backends use of it is exported here; the filter language every
backend compiles is the public module :mod:`engram.recall.filters`.
"""

from engram.recall._calibrate import (
    DEFAULT_MIN_SCORE,
    confidence,
    cosine_confidence,
    keyword_coverage,
)
from engram.recall._calibrate import coverage as stem_coverage
from engram.recall._context import (
    CONVERSATION,
    DEFAULT_CONTEXT,
    NO_DIALOGUE,
    Candidate,
    ContextBoost,
    names_time,
    pool_size,
    rerank,
    topic_query,
)
from engram.recall._dates import parse as parse_date
from engram.recall._embedder import Embedder, HashEmbedder, RecentEmbeddings, Vectors, normalise
from engram.recall._factory import (
    EMBEDDER_HELP,
    EMBEDDER_NAMES,
    embedder_for_model_id,
    embedder_from_name,
)
from engram.recall._fusion import rrf
from engram.recall._http import OpenAIEmbedder
from engram.recall._lexical import clear_caches as clear_keyword_caches
from engram.recall._lexical import stems_for, stored_stems
from engram.recall._local import MiniLMEmbedder
from engram.recall._relations import (
    about_someone_else,
    another_choice,
    as_named,
    as_relatives,
    choices_asked,
    introductions,
    knows_none,
    names_in_query,
    names_of,
    of_others_alone,
    of_the_user,
    others_only,
    people_named,
    relatives_named,
    who_is_who,
)
from engram.recall._relevance import (
    DEFAULT_MIN_SIMILARITY,
    MAX_QUERY_CHARS,
    MAX_SEARCH_TERMS,
    first_terms,
    index_terms,
    index_words,
    is_relevant,
    is_relevant_item,
    keyword_terms,
    keyword_text,
    relevance,
    search_terms,
    stem,
)
from engram.recall._scoring import Weights, combine, combiner, recency

__all__ = [
    "CONVERSATION",
    "DEFAULT_CONTEXT",
    "DEFAULT_MIN_SCORE",
    "DEFAULT_MIN_SIMILARITY",
    "EMBEDDER_HELP",
    "EMBEDDER_NAMES",
    "MAX_QUERY_CHARS",
    "MAX_SEARCH_TERMS",
    "NO_DIALOGUE",
    "Candidate",
    "ContextBoost",
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "RecentEmbeddings",
    "Vectors",
    "Weights",
    "about_someone_else",
    "another_choice",
    "as_named",
    "as_relatives",
    "choices_asked",
    "clear_keyword_caches",
    "combine",
    "combiner",
    "confidence",
    "cosine_confidence",
    "embedder_for_model_id",
    "embedder_from_name",
    "first_terms",
    "index_terms",
    "index_words",
    "introductions",
    "is_relevant",
    "is_relevant_item",
    "keyword_coverage",
    "keyword_terms",
    "keyword_text",
    "knows_none",
    "names_in_query",
    "names_of",
    "names_time",
    "normalise",
    "of_others_alone",
    "of_the_user",
    "others_only",
    "parse_date",
    "people_named",
    "pool_size",
    "recency",
    "relatives_named",
    "relevance",
    "rerank",
    "rrf",
    "search_terms",
    "stem",
    "stem_coverage",
    "stems_for",
    "stored_stems",
    "topic_query",
    "who_is_who",
]
