"""textkit: small text utilities.

The modules are independent; import the one you need, e.g.
``from textkit import slug``.
"""

__version__ = "0.3.0"
