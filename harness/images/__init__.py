"""Images: the harness base image, its wheelhouse, and participant submission images (built or loaded)."""
