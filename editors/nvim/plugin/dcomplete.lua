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

vim.api.nvim_create_user_command('DcompleteNextEdit', function()
  require('dcomplete').next_edit_request()
end, { desc = 'dcomplete: ask for the next edit at the cursor now' })

vim.keymap.set('n', '<Plug>(dcomplete-next-edit)', function()
  require('dcomplete').next_edit_jump_or_apply()
end, { desc = 'dcomplete: jump to the next edit, or apply it' })

vim.keymap.set('n', '<Plug>(dcomplete-next-edit-dismiss)', function()
  require('dcomplete').next_edit_dismiss()
end, { desc = 'dcomplete: dismiss the next edit' })
