--- Buffer-local keys that act only sometimes and otherwise do what the key did before dcomplete mapped it.
local M = {}

--- What `lhs` in `mode` did in `bufnr` before: a mapping of the user's or another plugin's (buffer-local
--- first, then global), else the key's own meaning. Returns a function that does it now.
---@param bufnr integer
---@param mode string
---@param lhs string
---@return fun()
function M.previous(bufnr, mode, lhs)
  local map = vim.api.nvim_buf_call(bufnr, function()
    return vim.fn.maparg(lhs, mode, false, true)
  end)
  if vim.tbl_isempty(map) or (map.desc or ''):find('^dcomplete:') then
    return function()
      local count = vim.v.count > 0 and tostring(vim.v.count) or ''
      vim.api.nvim_feedkeys(count .. vim.keycode(lhs), 'n', false)
    end
  end
  return function()
    local keys
    if map.callback then
      keys = map.callback()
      if map.expr ~= 1 then
        return
      end
    elseif map.expr == 1 then
      keys = vim.api.nvim_eval(map.rhs)
    else
      keys = map.rhs
    end
    if type(keys) == 'string' and keys ~= '' then
      if map.replace_keycodes == 1 or map.expr ~= 1 then
        keys = vim.keycode(keys)
      end
      vim.api.nvim_feedkeys(keys, map.noremap == 1 and 'n' or 'm', false)
    end
  end
end

--- Maps `lhs` in `bufnr` to `action`, which returns whether it acted; when it did not, the key does what it
--- did before (see `previous`). A plain function map, not an expression: the action may change the buffer.
---@param bufnr integer
---@param mode string
---@param lhs string
---@param action fun(): boolean
---@param desc string
function M.map_with_fallback(bufnr, mode, lhs, action, desc)
  local fallback = M.previous(bufnr, mode, lhs)
  vim.keymap.set(mode, lhs, function()
    if not action() then
      fallback()
    end
  end, { buffer = bufnr, desc = desc })
end

return M
