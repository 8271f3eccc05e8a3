"""Text analysis: how the plugin reads a summary and the conversation it covers.

One vocabulary, used by the gate (:mod:`agentcore_autosummary.judging.gate`), the
retention check and the quotes:

- a **word** is a run of letters, digits or underscores (:mod:`.words`);
- a **sentence** ends at ``.!?;`` and a space, a line end, or a Chinese full
  stop, question or exclamation mark or semicolon; a **statement** is a
  sentence worth quoting (:mod:`.sentences`);
- an **identifier** is what a reader would call the value of a fact: a path, a
  date, an amount, a version, a code, a name (:mod:`.identifiers`);
- a **subject** is the word an identifier is the value of (``port`` in
  ``port 8443``, :mod:`.subjects`);
- a **statement** is a value with the words of the clause that gives it; a later
  statement whose words the earlier clause names all gives its subject a new
  value (:mod:`.statements`).
"""
