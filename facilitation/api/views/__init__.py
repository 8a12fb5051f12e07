"""The API's views, one module per resource. Each view parses, authorizes, calls an action and renders."""
