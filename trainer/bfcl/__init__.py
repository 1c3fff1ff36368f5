"""BFCL-v4 multi-turn, played and graded as BFCL grades it, on the backends of the installed
``bfcl-eval`` package (its Python classes, records, ground truth and function docs).

- :mod:`.backend`: the package's data and classes; a :class:`~.backend.World` holds the instances of
  one record and runs calls on them, rendering results as BFCL does.
- :mod:`.calls`: BFCL's call strings (``mv(source='a', destination='b')``) parsed with :mod:`ast`,
  never evaluated; positional arguments named by the method's signature.
- :mod:`.grade`: a record's verdict from the calls a model made, turn by turn: BFCL's state and
  response checks (``multi_turn_checker``), written here.
"""
