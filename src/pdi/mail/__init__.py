"""E-mail (RFC 5322 messages with MIME, RFC 2045-2049) and mbox files, as pdi reads them (``docs/email.md``).

Python's :mod:`email` package is the parser (``email.policy.default``): a
message is read, never written back, so the octets stored are the message's
octets. :mod:`pdi.mail.message` reads one message within limits and says what
its body's text is (the text ``char`` and ``line`` count on) and what its
parts are (what ``part=`` names); :mod:`pdi.mail.mbox` cuts an mbox file into
its messages. On the floor of :mod:`pdi.mhtml` (whose ``cid:`` and
``Content-Location`` rules name a message's parts). Pure: no I/O.
"""
