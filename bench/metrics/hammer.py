import socket, sys, threading, time
socket.setdefaulttimeout(5)
port = int(sys.argv[1]); secs = float(sys.argv[2])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
stop = time.time() + secs
count = [0]
def scrape():
    while time.time() < stop:
        try:
            s = socket.create_connection(("127.0.0.1", port))
        except OSError:
            continue
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 6000 + b"\r\n\r\n")
        try:
            while s.recv(65536): pass
            count[0] += 1
        except OSError:
            pass
        s.close()
def trickle():
    while time.time() < stop:
        s = socket.create_connection(("127.0.0.1", port))
        try:
            while time.time() < stop:
                s.sendall(b"G"); time.sleep(0.05)
        except OSError:
            pass
ts = [threading.Thread(target=scrape) for _ in range(20)] + [threading.Thread(target=trickle) for _ in range(5)]
[t.start() for t in ts]; [t.join() for t in ts]
print("scrapes", count[0])
