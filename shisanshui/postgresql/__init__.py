"""Django's PostgreSQL backend, with health checks only for connections that sat idle."""
