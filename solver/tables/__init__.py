"""One table format for every game: header, checksums and memory-mapped arrays (``table``),
writes that never leave half a file (``atomic``), and the cache folder (``paths``)."""
