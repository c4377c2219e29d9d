"""mxasync.symbol (placeholder; the lead replaces this file)."""
