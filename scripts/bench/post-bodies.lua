-- wrk script for scripts/bench-http.sh: POSTs the bodies of a file (one JSON body per line) in
-- turn, each thread taking every n-th line, and counts non-200 answers and answers that say
-- "duplicate" (a body sent again once the file is used up).
-- usage: wrk ... -s post-bodies.lua URL -- BODIES_FILE THREADS

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  for line in io.lines(args[1]) do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  step = tonumber(args[2])
  index = id + 1
  duplicates = 0
  failures = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local body = bodies[index]
  index = index + step
  if index > #bodies then index = id + 1 end
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status ~= 200 then
    failures = failures + 1
  elseif body:find('"duplicate"', 1, true) then
    duplicates = duplicates + 1
  end
end

function done(summary, latency, requests)
  local duplicate_total, failure_total = 0, 0
  for _, thread in ipairs(threads) do
    duplicate_total = duplicate_total + thread:get("duplicates")
    failure_total = failure_total + thread:get("failures")
  end
  io.write(string.format("bench-lua: non200=%d duplicates=%d\n", failure_total, duplicate_total))
end
