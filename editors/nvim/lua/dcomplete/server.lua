--- Starting the dcomplete language server and talking to it.
local M = {}

M.NAME = 'dcomplete'

--- Latest `dcomplete/status` notification: {model, device, lastLatencyMs}.
---@type {model?: string, device?: string, lastLatencyMs?: number}|nil
M.status = nil

---@param bufnr integer
---@return vim.lsp.Client|nil
function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.NAME })[1]
end

local function root_dir(bufnr, markers)
  local found = vim.fs.root(bufnr, markers)
  if found then
    return found
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and vim.fs.dirname(name) or vim.fn.getcwd()
end

--- Starts (or reuses) the server for `bufnr`; returns the client id or nil.
---@param bufnr integer
---@param config dcomplete.Config
---@return integer|nil
function M.start(bufnr, config)
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify_once(
      ('dcomplete: server command `%s` is not executable (set `cmd` in setup())'):format(config.cmd[1]),
      vim.log.levels.ERROR
    )
    return nil
  end
  return vim.lsp.start({
    name = M.NAME,
    cmd = config.cmd,
    root_dir = root_dir(bufnr, config.root_markers),
    init_options = { dcomplete = config.settings },
    settings = { dcomplete = config.settings },
    handlers = {
      ['dcomplete/status'] = function(_, params)
        M.status = vim.tbl_extend('force', M.status or {}, params or {})
      end,
    },
  }, { bufnr = bufnr })
end

--- Sends new settings to every running dcomplete client.
---@param settings table
function M.push_settings(settings)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    client.settings = { dcomplete = settings }
    client:notify('workspace/didChangeConfiguration', { settings = { dcomplete = settings } })
  end
end

--- Runs a server command (workspace/executeCommand) for `bufnr`. Edits come back as
--- workspace/applyEdit, which Neovim applies itself; `on_done(err, result)` runs when the server answers.
---@param bufnr integer
---@param command string
---@param args table
---@param on_done? fun(err: table|nil, result: any)
---@return boolean sent
function M.execute(bufnr, command, args, on_done)
  local client = M.client(bufnr)
  if not client then
    vim.notify('dcomplete: no dcomplete server is attached to this buffer', vim.log.levels.ERROR)
    return false
  end
  client:exec_cmd({ title = command, command = command, arguments = { args } }, { bufnr = bufnr }, function(err, result)
    if err then
      vim.notify(('dcomplete: %s failed: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if on_done then
      on_done(err, result)
    end
  end)
  return true
end

--- Tells the server that a suggestion was accepted, by running the item's own command.
---@param client_id integer
---@param bufnr integer
---@param command lsp.Command|nil
function M.run_item_command(client_id, bufnr, command)
  local client = vim.lsp.get_client_by_id(client_id)
  if client and command then
    client:exec_cmd(command, { bufnr = bufnr })
  end
end

return M
