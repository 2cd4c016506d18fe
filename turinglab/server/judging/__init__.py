"""The static (Zhang-style) judge pages and their trial writer."""
