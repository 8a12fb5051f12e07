"""Facilitation runs: goals pursued with people in chat groups (and the browser room).

``patterns`` (the validated patterns and the machine check of done), ``rules`` (the rehearsal
model's reading of plain statements), ``texts`` (what the facilitator says) and ``floor``
(when it speaks) are pure.
"""
