"""The one write path of workspace rooms. Every function writes its rows, an ``Invocation``
(with the chain's correlation id) and a typed event pushed on commit."""
