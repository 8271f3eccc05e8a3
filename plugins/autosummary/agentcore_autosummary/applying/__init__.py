"""Applying a summary and fitting the request.

Storing it, the fence it is sent in, the window guard, the degraded request, the Full
mode.
"""
