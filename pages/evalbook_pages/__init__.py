"""The book ring: helpers that exist to write the book's pages, not to evaluate a model.

They call the core (``evalcore.*``) and the pinned harness to reproduce and display
behaviour; nothing in the core imports them. See DESIGN: "two rings".
"""
