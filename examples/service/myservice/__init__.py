"""A small service that owns one telemetry event and re-exports the built-in ones."""
