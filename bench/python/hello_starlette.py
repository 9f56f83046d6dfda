# The Starlette "hello" of bench/python.sh.
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route


async def hello(request):
    return PlainTextResponse("hello\n")


application = Starlette(routes=[Route("/", hello)])
app = application
