"""Interface layer: the library facade that commands call (app) and the thin click CLI."""
