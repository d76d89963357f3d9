"""The middleware of the site: write RequestIDMiddleware, MaintenanceMiddleware and ServiceErrorMiddleware here."""
