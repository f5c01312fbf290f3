"""A package whose app is in its main module."""
