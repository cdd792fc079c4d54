"""Fragments: one module per media family, and the registry that picks the evaluator."""
