-- wrk script: every request is a POST of one file's bytes (an arm's post_body
-- or body_bytes, which the harness writes to a file): the first script
-- argument is the file, the second the Content-Type. wrk builds the
-- request once, after init.
init = function(args)
  local file = assert(io.open(args[1], "rb"))
  wrk.method = "POST"
  wrk.body = file:read("*a")
  file:close()
  wrk.headers["Content-Type"] = args[2]
end
