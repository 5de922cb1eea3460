"""Retrieval: search representations, fuse hits per chunk, route questions by what they ask."""
