# The Flask "hello" of bench/python.sh.
from flask import Flask

application = Flask(__name__)
app = application


@application.route("/")
def hello():
    return "hello\n"
