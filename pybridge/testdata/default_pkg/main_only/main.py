async def app(scope, receive, send):
    pass
