# Sourced by the benchmarks: start_nginx ROOT starts nginx on 127.0.0.1 serving ROOT (a free port,
# workers as root when run as root, access log when NGINX_ACCESS_LOG names a file), waits until it
# listens (bounded: 10 s), and sets url, nginx_pid and nginx_dir. stop_nginx stops it and removes
# its folder; callers put it in their EXIT trap.
start_nginx() {
  local root=$1 port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  nginx_dir=$(mktemp -d /tmp/shardpack-nginx.XXXXXX)
  chmod 755 "$nginx_dir" "$root"
  cat >"$nginx_dir/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log;
$( ((EUID == 0)) && echo "user root;")
events { worker_connections 256; }
http {
  access_log ${NGINX_ACCESS_LOG:-off};
  sendfile on;
  client_body_temp_path $nginx_dir/body;
  proxy_temp_path $nginx_dir/proxy;
  fastcgi_temp_path $nginx_dir/fastcgi;
  uwsgi_temp_path $nginx_dir/uwsgi;
  scgi_temp_path $nginx_dir/scgi;
  server { listen 127.0.0.1:$port; root $root; }
}
CONF
  /usr/sbin/nginx -c "$nginx_dir/nginx.conf" -p "$nginx_dir" &
  nginx_pid=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && break
    sleep 0.1
  done
  url=http://127.0.0.1:$port
}

stop_nginx() {
  [[ -n ${nginx_pid:-} ]] && { kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; }
  [[ -n ${nginx_dir:-} ]] && rm -rf "$nginx_dir"
  return 0
}
