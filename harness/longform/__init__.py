"""Long-form (unsegmented) speech: recordings streamed whole, output resegmented onto reference sentences."""
