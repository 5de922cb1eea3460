"""The docstore: raw chunks, the vector ledger and the lexical index on SQLite, and the index writer."""
