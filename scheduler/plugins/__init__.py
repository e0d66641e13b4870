"""In-tree plugins, one module per concern."""
