"""engram over the network: authentication, the REST API and the MCP server.

Identity comes from the credential, never from the request: every route and tool acts for
the :class:`~engram.Principal` its key or token grants.
"""
