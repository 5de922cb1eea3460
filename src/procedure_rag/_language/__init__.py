"""Language rules as data: lexicons, note labels, numbering, step fields, sub-steps, text helpers."""
