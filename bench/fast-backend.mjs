// A backend that answers every request with 1 KiB. Usage: node fast-backend.mjs PORT
import http from 'node:http';

const body = Buffer.alloc(1024, 97);
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
    res.end(body);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
