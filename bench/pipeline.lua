-- wrk script: pipelined requests. Each write carries `depth` copies of
-- the request (first script argument, default 16). wrk counts the requests
-- in what request() returns and every response, so requests/sec counts
-- requests, not writes; latency is per batch: from its write to its last
-- response.
local depth = 16
local batch

init = function(args)
  depth = tonumber(args[1]) or depth
  local requests = {}
  for i = 1, depth do
    requests[i] = wrk.format()
  end
  batch = table.concat(requests)
end

request = function()
  return batch
end
