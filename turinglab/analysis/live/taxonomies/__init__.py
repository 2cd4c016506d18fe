"""Jones & Bergen taxonomies as data."""
