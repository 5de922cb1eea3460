"""Offline representation generators: one module per kind, and the generator that runs them all."""
