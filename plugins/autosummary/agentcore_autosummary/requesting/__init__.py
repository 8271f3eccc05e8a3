"""Building a summary request.

The prompt, the transcript, the prefix a request can reuse, the routes a retry takes,
the provider it goes to.
"""
