/*
 * floor: the kernel floor of the whole-server benchmark.
 *
 * One thread, level-triggered epoll, no HTTP parsing: every "\r\n\r\n" in
 * what a connection sends is taken as the end of one request and answered
 * with a fixed hello response, so pipelined requests get one response
 * each. What it costs per request is close to the least any server can
 * pay for a read and a write on loopback; the distance from it is what a
 * server's own work costs.
 *
 * The one concession to HTTP: a read that contains "Connection: close"
 * (as wrk sends it, exact case) is answered with a response carrying
 * "Connection: close" and the socket is then closed, as the other arms do
 * (wrk keeps a connection whose response does not say close, so without
 * this the close scenario would measure keep-alive here).
 *
 * Build: gcc -O2 -o floor floor.c
 * Usage: floor -addr 127.0.0.1:8083
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 256
#define READ_SIZE 65536
/* Responses kept back to back in one buffer, so one write() carries up to
 * this many pipelined responses (wrk's depth-16 script needs 16). */
#define RESPONSE_COPIES 64

static const char response_head[] = "HTTP/1.1 200 OK\r\nServer: m0serve\r\nDate: ";
static const char response_tail[] =
    "\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
static const char close_tail[] =
    "\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n"
    "Connection: close\r\n\r\nHello, World!";

/* IMF-fixdate is always 29 bytes (RFC 9110 section 5.6.7). */
#define DATE_LEN 29

static char responses[RESPONSE_COPIES * 256];
static size_t response_len;
static char close_response[256];
static size_t close_response_len;
static time_t date_second;

struct connection {
	unsigned matched; /* bytes of "\r\n\r\n" matched at the end of the last read */
	size_t owed;      /* response bytes accepted but not yet written */
	size_t offset;    /* position within the periodic response stream */
};

static struct connection *connections;
static int connection_capacity;

static void format_date(char *out, time_t now)
{
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(out, DATE_LEN + 1, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* Rebuilds the response buffers when the second changes; called once per
 * epoll_wait, so its cost is per pass, not per request. */
static void refresh_date(void)
{
	time_t now = time(NULL);
	if (now == date_second)
		return;
	date_second = now;
	char date[DATE_LEN + 1];
	format_date(date, now);
	char one[256];
	int n = snprintf(one, sizeof one, "%s%s%s", response_head, date, response_tail);
	response_len = (size_t)n;
	for (int i = 0; i < RESPONSE_COPIES; i++)
		memcpy(responses + (size_t)i * response_len, one, response_len);
	n = snprintf(close_response, sizeof close_response, "%s%s%s", response_head, date,
		     close_tail);
	close_response_len = (size_t)n;
}

/* Counts request ends in buf, carrying a terminator split across reads. */
static unsigned count_requests(struct connection *c, const char *buf, size_t n)
{
	static const char terminator[4] = {'\r', '\n', '\r', '\n'};
	unsigned count = 0;
	unsigned matched = c->matched;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == terminator[matched]) {
			if (++matched == 4) {
				count++;
				matched = 0;
			}
		} else {
			matched = buf[i] == '\r' ? 1 : 0;
		}
	}
	c->matched = matched;
	return count;
}

static struct connection *connection_for(int fd)
{
	if (fd >= connection_capacity) {
		int capacity = connection_capacity ? connection_capacity : 1024;
		while (capacity <= fd)
			capacity *= 2;
		struct connection *grown = realloc(connections, (size_t)capacity * sizeof *grown);
		if (!grown) {
			perror("floor: realloc connections");
			exit(1);
		}
		memset(grown + connection_capacity, 0,
		       (size_t)(capacity - connection_capacity) * sizeof *grown);
		connections = grown;
		connection_capacity = capacity;
	}
	return &connections[fd];
}

static void close_connection(int epfd, int fd)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	memset(connection_for(fd), 0, sizeof(struct connection));
}

/* Writes what is owed; returns 0 when all is written, 1 when the socket
 * is full, -1 on error. */
static int flush(int fd, struct connection *c)
{
	size_t period = response_len;
	while (c->owed > 0) {
		size_t start = c->offset % period;
		size_t chunk = RESPONSE_COPIES * period - start;
		if (chunk > c->owed)
			chunk = c->owed;
		ssize_t w = write(fd, responses + start, chunk);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				continue;
			return -1;
		}
		c->owed -= (size_t)w;
		c->offset += (size_t)w;
	}
	return 0;
}

static void set_interest(int epfd, int fd, unsigned events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}

static void on_readable(int epfd, int fd, char *buf)
{
	struct connection *c = connection_for(fd);
	ssize_t n = read(fd, buf, READ_SIZE);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		close_connection(epfd, fd);
		return;
	}
	unsigned requests = count_requests(c, buf, (size_t)n);
	if (requests == 0)
		return;
	if (memmem(buf, (size_t)n, "Connection: close", 17) != NULL) {
		/* Taken to be on the last request of the read: answer the ones
		 * before it, then one response saying close, then close (a client
		 * that said close sends no more). A socket too full to take them
		 * all is closed anyway; wrk's close scenario sends one per
		 * connection, so that never happens under the benchmark. */
		c->owed += (size_t)(requests - 1) * response_len;
		if (flush(fd, c) == 0 && write(fd, close_response, close_response_len) < 0) {
			/* The socket is closed just below either way. */
		}
		close_connection(epfd, fd);
		return;
	}
	int was_owing = c->owed > 0;
	c->owed += (size_t)requests * response_len;
	if (was_owing)
		return; /* EPOLLOUT is armed; it writes the rest */
	int r = flush(fd, c);
	if (r < 0)
		close_connection(epfd, fd);
	else if (r > 0)
		set_interest(epfd, fd, EPOLLIN | EPOLLOUT);
}

/* Returns -1 when it closed the connection. */
static int on_writable(int epfd, int fd)
{
	struct connection *c = connection_for(fd);
	int r = flush(fd, c);
	if (r < 0) {
		close_connection(epfd, fd);
		return -1;
	}
	if (r == 0)
		set_interest(epfd, fd, EPOLLIN);
	return 0;
}

static int listen_on(const char *addr)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host) {
		fprintf(stderr, "floor: -addr wants host:port, got %s\n", addr);
		exit(2);
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "floor: bad IPv4 host %s\n", host);
		exit(2);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4096) < 0) {
		fprintf(stderr, "floor: listen %s: %s\n", addr, strerror(errno));
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.0.1:8083";
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-addr") || !strcmp(argv[i], "--addr")) && i + 1 < argc)
			addr = argv[++i];
		else {
			fprintf(stderr, "usage: floor -addr host:port\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	refresh_date();
	int listener = listen_on(addr);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
	epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev);
	fprintf(stderr, "floor: listening on %s\n", addr);

	static char buf[READ_SIZE];
	struct epoll_event events[MAX_EVENTS];
	for (;;) {
		int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("floor: epoll_wait");
			return 1;
		}
		refresh_date();
		for (int i = 0; i < n; i++) {
			int fd = events[i].data.fd;
			if (fd == listener) {
				for (;;) {
					int client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
					if (client < 0)
						break;
					int nodelay = 1;
					setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
					memset(connection_for(client), 0, sizeof(struct connection));
					struct epoll_event cev = {.events = EPOLLIN, .data.fd = client};
					epoll_ctl(epfd, EPOLL_CTL_ADD, client, &cev);
				}
				continue;
			}
			if ((events[i].events & EPOLLOUT) && on_writable(epfd, fd) < 0)
				continue;
			if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_readable(epfd, fd, buf);
		}
	}
}
