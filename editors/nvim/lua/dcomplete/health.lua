--- :checkhealth dcomplete
local M = {}

local function check_version()
  local v = vim.version()
  local text = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') ~= 1 then
    vim.health.error('Neovim ' .. text .. ' is too old', 'dcomplete needs Neovim 0.11 or newer')
  elseif require('dcomplete.config').has_builtin() then
    vim.health.ok('Neovim ' .. text .. ' with vim.lsp.inline_completion (renderers: builtin, extmark)')
  else
    vim.health.ok('Neovim ' .. text .. ' (renderer: extmark; builtin needs 0.12+)')
  end
end

local function check_binary(cmd)
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    vim.health.error(
      ('server command `%s` not found or not executable'):format(exe),
      { 'pip install dcomplete, or set cmd = { "/path/to/python", "-m", "lsp_server" } in setup()' }
    )
    return false
  end
  vim.health.ok(('server command: %s (%s)'):format(table.concat(cmd, ' '), vim.fn.exepath(exe)))
  return true
end

local function check_server_starts(cmd)
  local ok, result = pcall(function()
    return vim.system(vim.list_extend(vim.deepcopy(cmd), { '--help' }), { text = true }):wait(20000)
  end)
  if not ok then
    vim.health.error('could not run the server command: ' .. tostring(result))
  elseif result.code ~= 0 then
    local detail = vim.trim((result.stderr or '') .. (result.stdout or ''))
    vim.health.error(('`%s --help` exited with %d'):format(table.concat(cmd, ' '), result.code), detail)
  else
    vim.health.ok('the server command runs (`--help` exits 0)')
  end
end

--- The languages the server announced (capabilities.experimental.dcomplete.languages) against `filetypes`.
local function check_languages(client, config)
  local experimental = client.server_capabilities and client.server_capabilities.experimental or {}
  local announced = type(experimental) == 'table' and experimental.dcomplete and experimental.dcomplete.languages
  if type(announced) ~= 'table' then
    vim.health.warn('the server did not announce its languages (an older dcomplete?)')
    return
  end
  vim.health.ok('languages the server completes: ' .. table.concat(announced, ', '))
  local plain = vim.tbl_filter(function(ft)
    return not vim.tbl_contains(announced, ft)
  end, config.filetypes)
  if #plain > 0 then
    vim.health.info('filetypes without a grammar (plain line completions, no parse check): ' .. table.concat(plain, ', '))
  end
end

--- Whether next edits can show: the server answers copilotInlineEdit and neither side turned them off.
local function check_next_edits(client, config)
  local next_edit = require('dcomplete.next_edit')
  if not next_edit.announced(client) then
    vim.health.info('the server does not answer next edits (textDocument/copilotInlineEdit; an older dcomplete?)')
  elseif next_edit.turned_off(config) then
    vim.health.info('next edits are off (next_edit.enabled / settings.nextEdit.enabled)')
  else
    vim.health.ok('next edits on (textDocument/copilotInlineEdit), asked ' .. config.next_edit.debounce_ms .. ' ms after an edit')
  end
end

local function check_clients(config)
  local clients = vim.lsp.get_clients({ name = require('dcomplete.server').NAME })
  if #clients == 0 then
    vim.health.info('no dcomplete server is running now (open a file of a configured filetype)')
    return
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    local inline = client.server_capabilities and client.server_capabilities.inlineCompletionProvider
    local line = ('server %s %s running (client id %d, encoding %s)'):format(
      info.name or '?',
      info.version or '',
      client.id,
      client.offset_encoding
    )
    if inline then
      vim.health.ok(line .. ', inline completion advertised')
    else
      vim.health.warn(line .. ', but it does not advertise inlineCompletionProvider')
    end
    check_languages(client, config)
    check_next_edits(client, config)
  end
end

function M.check()
  vim.health.start('dcomplete')
  check_version()
  local config = require('dcomplete').config()
  if not config then
    vim.health.warn('setup() has not been called', { 'require("dcomplete").setup({})' })
    config = require('dcomplete.config').defaults()
  else
    vim.health.ok(('renderer: %s'):format(config.renderer))
  end
  vim.health.info('languages (filetypes attached to): ' .. table.concat(config.filetypes, ', '))
  if check_binary(config.cmd) then
    check_server_starts(config.cmd)
  end
  check_clients(config)
end

return M
