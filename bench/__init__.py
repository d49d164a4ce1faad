"""Speed benchmarks: ``python -m bench <name> [options]`` runs ``bench/<name>.py``'s ``main``."""
