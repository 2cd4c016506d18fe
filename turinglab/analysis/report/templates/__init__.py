"""Report templates."""
