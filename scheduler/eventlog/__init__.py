"""The published event-log contract (schema) and its writer."""
