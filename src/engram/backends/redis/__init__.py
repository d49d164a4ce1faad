"""Redis backend (plain Redis >= 6.2 or Valkey, no modules): the hot tier."""
