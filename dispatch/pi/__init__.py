"""The Pi runtime: the config Pi reads (``config``), one Pi process in RPC mode
(``process``), its events as typed structs (``events``), and the thread payloads they
become (``decode``). See docs/bots.md."""
