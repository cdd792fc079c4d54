"""pdi: persistent document identifiers.

Mint ``urn:pdi://series.cc/YYYY/MM/DD/id.format.version`` names
(draft-mallery-urn-pdi-00, read as ``docs/specs/PDI-GRAMMAR.md`` says),
keep every version's bytes, and resolve a name down to a passage.
"""

__version__ = "0.3.0.dev0"
