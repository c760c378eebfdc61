if vim.g.loaded_dcomplete then
  return
end
vim.g.loaded_dcomplete = true

vim.api.nvim_create_user_command('DcompleteInfill', function(args)
  require('dcomplete').infill(args.line1, args.line2)
end, { range = true, desc = 'dcomplete: regenerate the selected lines' })

vim.api.nvim_create_user_command('DcompleteHoles', function()
  require('dcomplete').fill_holes()
end, { desc = 'dcomplete: fill every # <|hole|> line of the buffer' })

vim.api.nvim_create_user_command('DcompleteRefactor', function(args)
  require('dcomplete').refactor(args.line1, args.line2, args.args)
end, { range = true, nargs = '+', desc = 'dcomplete: rewrite the selected lines following an instruction' })
