-- wrk script for scripts/bench-ingestion.sh: POSTs the bodies of a file (one JSON body per line),
-- read as a stream (the file may be far larger than memory should hold), each thread taking
-- every n-th line, so no body is sent twice while the file lasts. Past its end a thread starts
-- again from the top and counts those requests as repeats. Counts non-200 answers (and keeps
-- the first one), and 200 answers that say "duplicate".
-- usage: wrk ... -s post-stream.lua URL -- BODIES_FILE THREADS

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  path = args[1]
  step = tonumber(args[2])
  file = assert(io.open(path, "r"))
  line_number = 0
  wrapped = false
  repeats, duplicates, failures = 0, 0, 0
  first_failure = ""
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local function next_body()
  local empty_passes = 0
  while true do
    local line = file:read("*l")
    if line == nil then
      empty_passes = empty_passes + 1
      if empty_passes > 1 then error("post-stream.lua: no body for thread " .. id .. " in " .. path) end
      file:close()
      file = assert(io.open(path, "r"))
      line_number = 0
      wrapped = true
    else
      line_number = line_number + 1
      if (line_number - 1) % step == id and #line > 0 then return line end
    end
  end
end

function request()
  local body = next_body()
  if wrapped then repeats = repeats + 1 end
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status ~= 200 then
    failures = failures + 1
    if first_failure == "" then first_failure = status .. " " .. string.sub(body or "", 1, 300) end
  elseif body:find('"duplicate"', 1, true) then
    duplicates = duplicates + 1
  end
end

function done(summary, latency, requests)
  local failure_total, duplicate_total, repeat_total, first = 0, 0, 0, ""
  for _, thread in ipairs(threads) do
    failure_total = failure_total + thread:get("failures")
    duplicate_total = duplicate_total + thread:get("duplicates")
    repeat_total = repeat_total + thread:get("repeats")
    if first == "" then first = thread:get("first_failure") end
  end
  io.write(string.format("bench-lua: non200=%d duplicates=%d repeats=%d\n", failure_total, duplicate_total,
    repeat_total))
  if first ~= "" then io.write("bench-lua: first non200: " .. first .. "\n") end
end
