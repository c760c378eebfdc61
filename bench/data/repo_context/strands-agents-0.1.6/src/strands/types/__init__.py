"""SDK type definitions."""
