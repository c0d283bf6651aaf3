"""The static policy: the cheap first filter run in the trusted parent on the candidate's source
before any process starts (`policy.py`: allow-listed imports, forbidden names and attributes;
`free_names.py`: the names a candidate's code may use unbound). It tells the model why it was
rejected; it is not the defence (the candidate room's tripwires and the parent's comparison are).

Imports may flow from here only to the shared ground (`kgym.verify.*` top level) and within this
room; the parent imports it (`tests/test_imports.py` holds this).
"""
