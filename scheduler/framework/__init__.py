"""Extension points, the Status type, profiles as data, and the plugin runtime."""
