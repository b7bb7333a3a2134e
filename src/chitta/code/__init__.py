"""Code intelligence (seed 001, "Code Intelligence"): symbols, callsites, imports and
inheritance extracted from source files with tree-sitter, stored behind the Store interface,
resolved into a call graph, and searched by the ``code`` lane and the ``code`` tools.

``model`` holds the records every part shares; ``extract`` turns one file's bytes into them
(the optional ``chitta[code]`` extra); the store keeps them per repository and file;
``resolve`` turns them into the call graph's edges and the callsites left open.
"""
